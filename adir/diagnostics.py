"""Errors and warnings that point at an op, so the driver can print them at the op's source
location."""

from __future__ import annotations

import warnings

from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException


class OpError(PassFailedException):
    """A pass failed because of one op; printed as `file:line:col: error: message`."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


class PassOptionError(ValueError):
    """A pass option with a bad value; the driver points at the option in the pipeline text."""

    def __init__(self, pass_name: str, option: str, message: str):
        super().__init__(f"{pass_name}: {message}")
        self.pass_name = pass_name
        self.option = option


class OpWarning(UserWarning):
    """Something legal but suspicious about one op; the driver prints it as
    `file:line:col: warning: message` and carries on (exit code 0)."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


def warn(op: Operation, message: str) -> None:
    """Report an `OpWarning` through Python's warnings (a driver collects and prints them)."""
    warnings.warn(OpWarning(op, message), stacklevel=2)

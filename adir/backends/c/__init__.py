"""The C99 backend; `runtime/` holds the headers and sources that the generated C includes."""

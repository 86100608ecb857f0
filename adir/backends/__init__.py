"""adir's backends: printers from planned IR to code for a target."""

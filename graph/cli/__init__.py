"""The command line: `warrant` and its commands, one module a group of them."""

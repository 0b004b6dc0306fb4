"""The command-line interface: one module per subcommand, wired in :mod:`.main`."""

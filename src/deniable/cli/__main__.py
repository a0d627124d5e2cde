"""``python -m deniable.cli ...`` runs the command line."""

from deniable.cli.app import main

main()

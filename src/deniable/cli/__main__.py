"""``python -m deniable.cli ...`` runs the command line."""

from deniable.cli import main

main()

from .start import command

command()

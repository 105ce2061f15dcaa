"""The output formats' names, on their own: ``--output-format``'s choices and ``--version`` need
them without importing the reporters (``sbatchlint.report`` renders each)."""

FORMATS = ("text", "concise", "json", "sarif", "github", "junit", "gitlab")

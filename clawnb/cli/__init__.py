"""The command line: ``python -m clawnb`` (``main``), the terminal chat (``chat``) and its
plain-text rendering of the event stream (``terminal``)."""

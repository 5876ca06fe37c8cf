"""The commands of the ``hashexpr`` command line, one module each.

A command's module holds ``add_<command>``, which registers the command on the subparsers of
:func:`hashexpr.cli.main.build_parser` (with the options it shares with other commands, from
:mod:`hashexpr.cli.grammar`) and sets its ``run`` to ``_run_<command>``, which runs it and returns an
:class:`~hashexpr.cli.outcome.Outcome`; and the helpers that only this command uses.
"""

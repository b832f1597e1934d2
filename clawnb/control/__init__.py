"""What each guarantee of the control plane needs, one concern a module.

``secrets`` (key names, lookup, the redactor), ``shell`` (splitting and normalising command
lines), ``process`` (process groups, kills, clean environments, sandboxed launch), ``sandbox``
(the bubblewrap policy), ``trust`` (what a project's config may change), ``checkpoints``
(undo), ``modes`` (the permission modes). The session (:mod:`clawnb.session`) wires them into
the gate; nothing here imports a front end.
"""

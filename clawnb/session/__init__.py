"""The session: the one object a front end holds.

``assemble`` builds an :class:`~clawnb.session.assemble.AgentSession` (loop, gate, tools,
system prompt) from config; ``protocol`` states what front ends may call on any session
(clawnb's own or a learner's, loaded by ``custom``); ``log`` is the write-ahead session log
that ``resume`` reads back.
"""

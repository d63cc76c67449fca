"""Talking to an implementation under test: the Python protocol of a merge implementation
(``adapter``), its capability claims (``claims``), the supervised connection in-process or over
the adapter protocol (``connection``, ``strict``), and the node probe client (``exec_node``)."""

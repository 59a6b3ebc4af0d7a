"""The referee: plays bots against each other (``referee.match``), in the Docker sandbox
(``referee.sandbox``), in tournaments (``referee.tournament``) kept in
a store (``referee.store``). The command line lives one layer up, in ``arena``.

"""

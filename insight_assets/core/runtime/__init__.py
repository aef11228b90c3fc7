"""The stage runtime: how a method's model-calling work is declared and run.

``stage`` declares a stage (its settings, what it reads, its work) and the scope it runs in;
``stage_settings`` the settings models stages take; ``stage_output`` what a stage keeps of its work
(tables and report). ``forked`` spreads a list of items over forked worker processes; ``cores`` says
how many CPU cores this process may use; ``signals`` keeps a process stoppable; ``heap`` keeps what
lives as long as the process out of the garbage collector's way.
"""

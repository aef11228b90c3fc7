"""What runs around the Dagster definitions: the command line (``commands``), asking the methods
(``asking``), the dry run (``dry_run``), builds in this process (``in_process``), the instance file
(``instance``) and where steps execute (``execution``). ``insight_assets.defs`` holds the Dagster
definitions themselves."""

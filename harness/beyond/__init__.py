"""Beyond the lesson, built on the lesson's blocks (checkpoint, ledger, loop, reconcile) rather than copies of them.

  parallel     a pending set: checkpoint version 2, several tool_use blocks a turn (notebook 11)
  idempotent   tools asked by an idempotency key, reconcile's fourth branch (notebook 12)
  scenarios    the four scenarios (lesson, --parallel, --idempotent, both) and one way to run any of them
  modes        which scenario a folder's task was started in (mode.json), so --resume continues it as started
  engine_dbos  the same task as a DBOS durable workflow (notebook 13; imports dbos, so only with --engine dbos),
               with dbos_database (the system database: URL, secrets, whether it answers) and dbos_worker (this
               process's state, its task lock, the watch on the database)

Importing this package imports none of them.
"""

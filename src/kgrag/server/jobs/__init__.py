"""The write queues: every write to a workspace runs in its queue, in order.

queues.py      Jobs: the workspaces' queues in this process; submit, await, list
work_queue.py  one workspace's queue: its writer and the task running its jobs
thread.py      the event loop of its own, on a thread of its own, the queues run on
record.py      a job and its record in the workspace's store (any process reads it)
"""

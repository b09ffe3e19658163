"""What the document routes do, behind their HTTP handling (``routes/documents.py`` and beside it).

jobs.py     the jobs of insert, upload, scan, supersede, delete, reprocess: each writes
            through the index's one write path (``rag.indexing``) in the workspace's queue
tracks.py   track ids: the documents one upload, insert or scan asked for, and why
            some were refused
uploads.py  storing uploaded files safely in a workspace's input folder, each file
            accepted or refused with a short reason
"""

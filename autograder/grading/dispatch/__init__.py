"""Where students are graded: the local pool of workers or a Dask cluster, and what a worker may tell the parent."""

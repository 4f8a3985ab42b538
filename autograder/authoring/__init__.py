"""The course's authoring tools: the notebook forms from their sources, JupyterLab, a learner's update.

    build.py   `make course`: source/<id>/<id>.py into notebooks/ (the learner's) and solutions/; `--check` for drift
    carry.py   `carry-over`: a learner's answers onto the course's newer version of a notebook
    lab.py     `make lab`, `make instructor`: JupyterLab on the learner's own copy, or formgrader on the course
"""

"""The course's authoring tools: build the notebook forms from their sources, open them in JupyterLab."""

"""Gate Beside: what runs next to the learner's code, the clean re-run.

The learner's answers alone in a sandboxed interpreter (`clean_runner`, sent in as source) with a public
build of ffn_helpers that computes nothing (`public`); the tests run in a confined judge (`judge`); the
two talk over a channel that carries bounded plain data only (`rpc`); `rerun` drives it from the worker.
"""

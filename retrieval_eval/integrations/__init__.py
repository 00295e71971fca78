"""Where retrieval_eval plugs into other tools: Spark (:mod:`.spark`), ir_measures (:mod:`.ir_measures`)
and test suites (:mod:`.testing`)."""

"""Where retrieval_eval plugs into other tools: Spark (:mod:`.spark`) and test suites (:mod:`.testing`)."""

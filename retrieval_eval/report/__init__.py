"""What users read: trec_eval's lines and JSON (:mod:`.text`), tables (:mod:`.tables`) and plots
(:mod:`.plotting`)."""

"""``modern-aqm``: the five studies' AF mechanisms beside the AQMs deployed today."""

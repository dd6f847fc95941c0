"""``mixed-traffic``: the AF mechanisms of the five studies under a realistic traffic mix."""

"""Decision rules: the concept, the engines' table rules, the optimal rules, the symmetric observer's rule and its
count thresholds, and the one factory with its cache."""

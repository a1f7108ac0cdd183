"""Statistics from a partial human pass: the sampling design, prediction-powered estimates, planning."""

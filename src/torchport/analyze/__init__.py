"""Static analysers: report what cannot be moved off CUDA, or could be faster."""

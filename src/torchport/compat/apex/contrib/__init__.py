"""apex.contrib where torch computes the same thing: clip_grad (torch's clip_grad_norm_),
layer_norm's FastLayerNorm (torch's LayerNorm), xentropy's SoftmaxCrossEntropyLoss (torch's
cross entropy with label smoothing); and Ascend apex's combine_tensors, what ModelZoo's own fused
optimizers import. apex.contrib's other modules are CUDA kernels with no torch form: importing them
fails, as it does where apex was built without them."""

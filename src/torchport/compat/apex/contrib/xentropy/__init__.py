from torchport.compat.apex.contrib.xentropy.softmax_xentropy import SoftmaxCrossEntropyLoss

__all__ = ["SoftmaxCrossEntropyLoss"]

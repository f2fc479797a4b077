import time

import torch


def timed(step):
    start = time.perf_counter()
    step()
    end = time.perf_counter()
    return (end - start) * 1000

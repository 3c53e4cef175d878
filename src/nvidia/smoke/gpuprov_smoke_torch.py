# gpuprov verify --smoke: can this Python import torch, does torch see the GPU, and does a
# matmul on it give the CPU's answer? Read from stdin by the profile's venv Python. Every result
# is one line starting with "gpuprov-smoke " (src/nvidia/smoke_parse.cpp reads them).
# Exit status: 0 right answer, 1 wrong answer or an error on the GPU, 2 no GPU for torch,
# 3 torch cannot be imported.
import sys

try:
    import torch
except Exception as e:  # ImportError, or OSError from a torch whose libraries are broken
    print("gpuprov-smoke torch-missing %s: %s" % (type(e).__name__, str(e).replace("\n", " ")))
    sys.exit(3)

print("gpuprov-smoke torch version=%s cuda=%s" % (torch.__version__, torch.version.cuda))
available = torch.cuda.is_available()
print("gpuprov-smoke cuda-available %s devices=%d" % (available, torch.cuda.device_count()))
if not available:
    sys.exit(2)
try:
    # Small whole numbers: every product and sum is exact in float32 (and in TF32), so the
    # GPU's result has exactly one right answer.
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-4, 5, (512, 512), generator=g).float()
    b = torch.randint(-4, 5, (512, 512), generator=g).float()
    expected = a @ b
    got = (a.cuda() @ b.cuda()).cpu()
    wrong = int((got != expected).sum().item())
    print("gpuprov-smoke matmul elements=%d wrong=%d" % (expected.numel(), wrong))
except Exception as e:
    print("gpuprov-smoke error %s: %s" % (type(e).__name__, str(e).replace("\n", " ")))
    sys.exit(1)
sys.exit(0 if wrong == 0 else 1)

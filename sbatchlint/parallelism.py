"""Megatron's parallel sizes and what they imply, in one place: the expert layers' group
(SBL106 checks that it divides the world size) and the experts each GPU holds (``diagnose``
explains a mixture-of-experts out-of-memory with it).

Only expert parallelism (EP) splits the experts over GPUs: a GPU holds num_experts / EP of them.
Each expert's weights are further split by the expert tensor parallel size (ETP), which Megatron
sets to TP when it is not given. Tensor parallelism alone does not reduce the expert memory.
"""
from __future__ import annotations


from .lazyclass import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Dict, List, Optional, Tuple


def expert_group(sizes: Dict[str, int]) -> Tuple[List[str], List[int], int]:
    """The factors whose product must divide the world size for the expert layers.

    ETP defaults to TP in Megatron; when it is not given, only EP·PP is certain, so only those
    are checked.
    """
    ep, pp = sizes.get("ep", 1), sizes.get("pp", 1)
    names, factors = (["ETP", "EP", "PP"], [sizes["etp"], ep, pp]) if "etp" in sizes else (["EP", "PP"], [ep, pp])
    product = 1
    for factor in factors:
        product *= factor
    return names, factors, product


@dataclass(frozen=True)
class ExpertLayout:
    experts: int
    ep: int
    etp: int
    etp_given: bool

    @property
    def experts_per_gpu(self) -> float:
        return self.experts / self.ep

    def describe(self) -> str:
        per_gpu = self.experts_per_gpu
        count = f"{per_gpu:g}"
        split = (f"each split {self.etp} ways by ETP" if self.etp_given
                 else f"each split {self.etp} ways by ETP (unset: Megatron uses TP)")
        return f"{self.experts} experts / EP {self.ep} = {count} experts per GPU, {split}; only a larger EP puts fewer experts on each GPU"


def expert_layout(experts: int, ep: Optional[int] = None, tp: Optional[int] = None,
                  etp: Optional[int] = None) -> ExpertLayout:
    return ExpertLayout(experts, ep or 1, etp if etp else (tp or 1), etp is not None)

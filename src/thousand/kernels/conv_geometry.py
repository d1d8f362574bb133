"""How a convolution walks its input (B11): stride, padding, dilation and groups.

One object, passed to the forward convolution and to both of its gradients, so the
three always agree on the shape they work on. With H x W inputs and an R x S kernel,
the output is P x Q with

    P = (H + 2 pad - dilation (R - 1) - 1) // stride + 1     (Q alike, with W and S)

and output (p, q) reads input rows p stride - pad + r dilation, r = 0 .. R-1 (rows
outside the image read as zeros). With `groups` = G the C input and F output
channels split into G groups of C/G and F/G; each output channel sees only the
inputs of its group, so the kernel is R x S x C/G x F. G = C = F is a depthwise
convolution: one R x S filter per channel.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConvGeometry:
    stride: int = 1
    pad: int = 0
    dilation: int = 1
    groups: int = 1

    def __post_init__(self):
        for name, least in (("stride", 1), ("pad", 0), ("dilation", 1), ("groups", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise ValueError(
                    f"ConvGeometry: `{name}` must be an int >= {least}, got {v!r}"
                )

    def output_hw(self, H: int, W: int, R: int, S: int) -> tuple[int, int]:
        """P, Q: the positions the dilated R x S window takes in the padded image."""
        span_r, span_s = self.dilation * (R - 1) + 1, self.dilation * (S - 1) + 1
        return (
            (H + 2 * self.pad - span_r) // self.stride + 1,
            (W + 2 * self.pad - span_s) // self.stride + 1,
        )

    def check(self, op: str, H: int, W: int, C: int, R: int, S: int, F: int) -> None:
        """Refuse a geometry that does not fit these sizes, saying why."""
        if min(R, S) < 1:
            raise ValueError(f"{op}: the kernel is {R} x {S}; it needs R, S >= 1")
        if C == 0 or F == 0:
            raise ValueError(f"{op}: {C} input and {F} output channels; need >= 1 each")
        G = self.groups
        if C % G or F % G:
            raise ValueError(f"{op}: groups = {G} must divide both C = {C} and F = {F}")
        P, Q = self.output_hw(H, W, R, S)
        if P < 1 or Q < 1:
            raise ValueError(
                f"{op}: a {R} x {S} kernel (dilation {self.dilation}) does not fit "
                f"in a {H} x {W} image padded by {self.pad}"
            )

"""The simulated learning curves of the early-stopping benchmark, in Python.

A line-for-line mirror of curve_family.cc (read its header for the formulas): the same seeded
family, the same SplitMix64 chains and Box-Muller noise, the same order of floating-point
operations, so that both sides produce identical doubles; stopping_bench.py checks this at fixed
points before it compares anything.
"""

import math
from dataclasses import dataclass

MASK = (1 << 64) - 1
NOISE = 0.01

# name -> (u_low, u_span, r_low, r_span, reg_slowdown), as FamilyNamed() in curve_family.cc.
FAMILIES = {
    "mild": (0.55, 0.2, 0.3, 0.4, 0.5),
    "strong": (0.25, 0.2, 0.2, 0.6, 0.0),
}


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def unit(h):
    return float(h >> 11) * 2.0**-53


@dataclass(frozen=True)
class Problem:
    family: str
    seed: int
    u_star: float
    r_star: float
    reg_slowdown: float


@dataclass(frozen=True)
class Config:
    learning_rate: float
    regularization: float
    layers: int


def make_problem(family, seed):
    u_low, u_span, r_low, r_span, reg_slowdown = FAMILIES[family]
    h1 = splitmix64(seed ^ 0x0123456789ABCDEF)
    h2 = splitmix64(h1)
    return Problem(family, seed, u_low + u_span * unit(h1), r_low + r_span * unit(h2), reg_slowdown)


def _u(config):
    return (math.log10(config.learning_rate) + 4.0) / 3.0


def _asymptote(p, u, regularization, layers):
    du = u - p.u_star
    dr = regularization - p.r_star
    dl = float(layers) - 5.0
    return 0.10 + 0.8 * du * du + 0.3 * dr * dr + 0.01 * dl * dl


def _speed(p, u, regularization, layers):
    return (0.02 + 0.5 * u * u) * (1.2 - 0.05 * float(layers)) * (1.0 - p.reg_slowdown * regularization)


def _loss(a, k, epoch):
    return a + (1.0 - a) * math.exp(-k * float(epoch))


def true_loss(problem, config, epoch):
    u = _u(config)
    return _loss(
        _asymptote(problem, u, config.regularization, config.layers),
        _speed(problem, u, config.regularization, config.layers),
        epoch,
    )


def observed_loss(problem, config, index, epoch):
    h0 = splitmix64(problem.seed)
    h1 = splitmix64(h0 ^ index)
    h2 = splitmix64(h1 ^ epoch)
    h3 = splitmix64(h2)
    u1 = float((h2 >> 11) + 1) * 2.0**-53
    u2 = unit(h3)
    z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
    return true_loss(problem, config, epoch) + NOISE * z

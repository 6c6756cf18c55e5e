"""The book's shared settings: one place for the defaults every chapter,
figure, widget and the in-page explorer use, so they all show the same signal.
"""

#: Seed of the book's noise realisation.
SEED = 1729
#: Default number of samples.
N = 100
#: Default noise standard deviation.
SIGMA = 0.3
#: Default temperature of the engineered head.
TEMPERATURE = 0.005
#: Number of periods of the sine on [0, 1].
PERIODS = 1
#: Slider ranges (inclusive) of the interactive demos.
N_RANGE = (5, 1000)
SIGMA_RANGE = (0.0, 1.5)
#: From 1e-8, where the attention matrix is the identity even at N = 1000
#: (neighbours 1e-3 apart get weight exp(-1e-6 / 1e-8) = exp(-100)), to 10,
#: where it is nearly uniform.
TEMPERATURE_RANGE = (1e-8, 10.0)

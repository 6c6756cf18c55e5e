"""The book's experiments, one module per question it answers.

Each module holds the functions, and the constants, of one study; every
setting is an explicit argument and all randomness comes from an ``rng``
argument, so a chapter, a test and a benchmark calling a study with the same
arguments get the same numbers. The figures of a study, where it has any,
live in the module of the same name under :mod:`selfattention.figures`.

* :mod:`.worked_example`: one attention head on four tokens, every step kept;
* :mod:`.dk_scaling`: why the scores are divided by ``sqrt(d_k)``;
* :mod:`.onedim`: why a head on one-number tokens cannot smooth;
* :mod:`.gaussian_band`: the engineered head's rows are Gaussians;
* :mod:`.temperature_limits`: the identity and the uniform average at the
  ends of the temperature range;
* :mod:`.noise_and_samples`: the head's error as the noise and the number of
  samples change;
* :mod:`.bias_variance`: the head's error split into bias and variance;
* :mod:`.power_laws`: how the best temperature scales with ``N`` and ``sigma``;
* :mod:`.leave_one_out`: how well leave-one-out finds the best temperature;
* :mod:`.learned_head`: a head trained by gradient descent on the
  leave-one-out loss of one noisy sine;
* :mod:`.content_attention`: heads whose scores compare values, on sines
  with a jump;
* :mod:`.noise2noise`: heads tuned and trained on a second noisy draw of
  each signal instead of the ground truth;
* :mod:`.sinusoidal`: sinusoidal encodings as a kernel: shift invariance,
  the Gaussian limit, aliasing;
* :mod:`.rotary`: rotated queries and keys (RoPE): shift invariance for any
  projections, and signals longer than the span a head was set up for;
* :mod:`.alibi`: ALiBi's Laplace kernel against the Gaussian head: ranks,
  leave-one-out, neighbours at equal width;
* :mod:`.equal_width`: the Gaussian, cosine and ALiBi heads at one width
  on many noise draws;
* :mod:`.causal`: heads that see only the past: their lag, offsets, and
  predicting the next sample.
"""

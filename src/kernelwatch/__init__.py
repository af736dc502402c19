"""kernelwatch: measuring GPU kernels, judging them, keeping what was measured.

Its rooms, in import order (a module imports only its own room and the rooms
before it; tests/project/test_layout.py checks it):

  units     how times, changes and percentages are written (a leaf)
  metrics   error metrics against a float64 reference (a leaf)
  timing    the instrument: timer, stop rule, CUPTI, hold and flush kernels, GPU identity, ceilings
  verdict   the record of a case, the noise model, the labels, judging against stored runs or a ref
  storage   stored runs: baselines on disk (numbered, checked, migrated) and the history store
  ab        the kernel library (a project's kernels), a git ref's tree beside this one, machine-code identity,
            the same-run comparison, commit windows
  cause     why a case is slower: the cause card from two builds (static) and two ncu profiles (dynamic)
  report    markdown reports and plots
  history   `python -m kernelwatch.history`: commands over the store, change points, the dashboard
  plugin    the pytest plugin: options, hooks, fixtures, xdist
  compare   `python -m kernelwatch.compare OLD NEW`
  cli       `kernelwatch`: compare, plot and the history commands under one name
"""

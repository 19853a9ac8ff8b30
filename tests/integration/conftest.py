"""Fixtures of the integration suites (pytest): the vCenter simulator harness, workspaces, and
the `clean` and `violations` estates polled once by `vslint check` for the tests that only read
them. A test that changes an estate or needs fault flags starts its own simulator (start_sim).
Each test file is one pytest run (tests/integration/meson.build), so "session" means one file."""
import pytest

from simlib import Estate, Sim, Workspace


@pytest.fixture
def workspace():
    """A fresh workspace (password file, configuration, database) for one test."""
    ws = Workspace()
    yield ws
    ws.cleanup()


@pytest.fixture(scope='module')
def module_workspace():
    """A workspace shared by the tests of one module."""
    ws = Workspace()
    yield ws
    ws.cleanup()


@pytest.fixture(scope='session')
def new_workspace():
    """new_workspace() makes a workspace that lasts until the end of the run, for fixtures that
    need more than one."""
    made = []

    def make():
        made.append(Workspace())
        return made[-1]

    yield make
    for ws in made:
        ws.cleanup()


@pytest.fixture
def start_sim():
    """start_sim(scenario, ...) starts a simulator (simlib.Sim's arguments) that only this test
    uses; it is stopped after the test."""
    sims = []

    def start(*args, **kw):
        sims.append(Sim(*args, **kw))
        return sims[-1]

    yield start
    for sim in sims:
        sim.stop()


def scenario_sim(name, scenario, scope, doc):
    """The fixture `name` (described by doc): a simulator of scenario, started once for the
    scope and stopped after it."""
    def fixture():
        with Sim(scenario) as sim:
            yield sim
    fixture.__doc__ = doc
    return pytest.fixture(fixture, scope=scope, name=name)


clean_sim = scenario_sim('clean_sim', 'clean', 'session',
                         """The `clean` scenario, which no test changes.""")
gate_sim = scenario_sim('gate_sim', 'gate', 'session',
                        """The `gate` scenario (tests/sim/scenario_gate.go): datastores just under
    each threshold of the what-if gate; no test changes it.""")
violations_sim = scenario_sim('violations_sim', 'violations', 'session',
                              """The `violations` scenario (tests/sim/scenario_violations.go),
    which no test changes.""")
sim = scenario_sim('sim', 'violations', 'module',
                   """A `violations` simulator of the module's own, which its tests may change
    (power a VM off, fill a datastore: through its SOAP API or its control endpoint).""")


def polled(sim, ws, name):
    est = Estate(sim, ws, name)
    est.findings = est.check()
    return est


@pytest.fixture(scope='session')
def clean(clean_sim, new_workspace):
    """The clean estate as vCenter "clean", polled once: .findings of that first run."""
    return polled(clean_sim, new_workspace(), 'clean')


@pytest.fixture(scope='session')
def lab(violations_sim, new_workspace):
    """The violations estate as vCenter "lab", polled once: .findings of that first run (every
    one new). Tests that write to its database work on lab.copy(workspace)."""
    return polled(violations_sim, new_workspace(), 'lab')

"""Cases the check suites share over their tables of planted objects (test_checks_*.py):
every compliant twin is silent, and every planted finding's evidence holds the planted values.
A module binds them under the names pytest collects:

    test_compliant_twin_silent, test_evidence = twin_and_evidence_cases('lab', TWINS, EVIDENCE)

where 'lab' names the fixture of the polled estate (its .findings are read)."""
import pytest

from simlib import evidence_has, ids_of, rows_of, silent


def twin_and_evidence_cases(estate, twins, evidence):
    """The two parametrized tests over twins ({check: [object names]}) and evidence
    ({check: {object name: {key: value}}}), one case a row, on the fixture named estate."""

    @pytest.mark.parametrize('check,name', rows_of(twins), ids=ids_of(rows_of(twins)))
    def twin_silent(request, check, name):
        silent(request.getfixturevalue(estate).findings, check, name)

    @pytest.mark.parametrize('check,name,want', rows_of(evidence), ids=ids_of(rows_of(evidence)))
    def evidence_held(request, check, name, want):
        evidence_has(request.getfixturevalue(estate).findings, check, name, want)

    return twin_silent, evidence_held

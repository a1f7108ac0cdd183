"""`review plan`: the planned sample gives the interval it promises, and can be queued."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sqlalchemy import select

from review.db import migrate
from review.db.models import Codebase, SamplingDesign
from review.db.session import Database
from review.estimate.plan import Priors, _measured, _prior, _solve
from review.estimate.ppi import z_value
from review.estimate.simulate import Design, Rules, _stratum, simulate
from tests.test_estimate_export import corpus


@pytest.mark.parametrize("target", [0.03, 0.05])
def test_planned_size_gives_the_target_half_width(target):
    """Measure the rules on a pilot sample, plan, then draw samples of the planned size:
    their intervals are as wide as promised (within 10%), for PPI and for human only."""
    rules, size = Rules(), 2834
    pilot, _, _ = _stratum(np.random.default_rng(1), 1, size, 400, rules)
    one = lambda x: x[0]  # noqa: E731
    pilot = type(pilot)(*(one(getattr(pilot, f)) for f in ("y", "yhat", "yhat_all", "d", "dhat", "dhat_all")))
    _, v_r, v_u, var_g, den = _measured([pilot], 0.95)
    n_ppi, n_human, reachable = _solve(v_r, v_u, var_g, den, size, target, z_value(0.95))
    assert reachable and n_ppi < n_human
    ppi = simulate(Design((size,), (n_ppi,), (rules,)), reps=200, seed=4).summary()
    human = simulate(Design((size,), (n_human,), (rules,)), reps=200, seed=5).summary()
    assert ppi["ppi_half_width"] == pytest.approx(target, rel=0.1)
    assert human["human_half_width"] == pytest.approx(target, rel=0.1)


def test_priors_match_what_they_describe():
    """Stated error rates give the variance a sample with those rates would measure."""
    rules = Rules(metric_miss=0.0, metric_invent=0.0)  # priors leave the denominator's errors out
    big, _, _ = _stratum(np.random.default_rng(2), 1, 200_000, 200_000, rules)
    flat = type(big)(*(getattr(big, f)[0] for f in ("y", "yhat", "yhat_all", "d", "dhat", "dhat_all")))
    _, v_r, _, var_g, den = _measured([flat], 0.95)
    a_all, d_all = flat.parts()[2], flat.parts()[5]
    _, pv_r, _, pvar_g, pden = _prior(a_all, d_all, Priors(miss=rules.miss, invent=rules.invent))
    assert (pv_r, pvar_g, pden) == pytest.approx((v_r, var_g, den), rel=0.03)


def test_plan_command_queues_exactly_the_planned_sample(cli, tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    migrate.upgrade(database)
    truth = corpus(database, 400, seed=3)
    with database.session() as s:  # every fifth paper has a codebase
        for pid in sorted(truth)[::5]:
            s.add(Codebase(paper_id=pid, url=f"https://github.com/o/r{pid}", host="github.com", owner="o",
                           name=f"r{pid}", lookup_status="exists", code_metric_prelim=True, scan_outcome="ok",
                           scan_commit="abc", packages=["GL/rougescore"], anti_features=[], eval_reproducible=True))
    database.dispose()
    code, out, err = cli("plan", "--target", "list_parameters=0.08", "--json")
    assert code == 0, err
    planned = json.loads(out)
    need = planned["needs"][0]
    assert need["source"].startswith("priors") and 0 < planned["papers"] < need["papers_human_only"] <= 400
    code, out, err = cli("plan", "--target", "list_parameters=0.08", "--queue", "--seed", "3", "--offline",
                         "plan.json", "--json")
    assert code == 0, err
    queued = json.loads(out)["queued"]
    tasks = json.loads((tmp_path / "plan.json").read_text())
    assert len(tasks) == queued["papers"] == planned["papers"]
    database = Database(f"sqlite:///{tmp_path / 'db' / 'review.sqlite'}")
    with database.session() as s:
        d = s.get(SamplingDesign, queued["design"])
        assert (d.method, d.seed, len(d.items), d.random) == ("sample", 3, planned["papers"], True)
        assert sorted(int(t["data"]["ref"].split(":")[1]) for t in tasks) == d.items
        with_code = {c.id for c in s.scalars(select(Codebase).where(Codebase.paper_id.in_(d.items)))}
    code_tasks = json.loads((tmp_path / "plan-code.json").read_text())
    assert with_code and {int(t["data"]["ref"].split(":")[1]) for t in code_tasks} == with_code
    assert queued["codebases"] == len(with_code)
    assert abs(json.loads(out)["codebases"] - len(with_code)) <= 0.5 * len(with_code)  # the plan's guess
    database.dispose()
    code, _, err = cli("plan", "--target", "reproducible=2")
    assert code == 3 and "bad --target 'reproducible=2'" in err
    code, _, err = cli("plan", "--target", "nonsense=0.02")
    assert code == 3 and "reproducible" in err

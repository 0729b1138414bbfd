"""The meter graph: one disclosure resolved into meters, each a (Q, method), best status first.

Scope. ``it_energy_kwh`` is accelerator energy as published footprints scope it: board power
(measured, or TDP x an assumed fraction) unless ``power_basis: system`` says the figure already
includes the host; host servers are not added. ``facility_energy_kwh`` applies PUE. An
``energy_mwh`` without ``energy_scope`` is read as facility energy (flagged), and the
consistency checks test the IT reading. A reporting ``convention`` that applies no PUE (the
ML CO2 Impact calculator, CodeCarbon's default) makes facility energy equal board energy, as
the reporter computed it, and says so.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable, Mapping

from core.units import KG_PER_T, KWH_PER_MWH
from pipelines import estimators as est
from pipelines.reconstruct import reference as ref
from pipelines.reconstruct.sampling import ESTIMATED, REPORTED, Q, exact, spanning, var_id
from sources.disclosure_format import MEASURED_BY

# Without a disclosed precision, MFU uses the first dense peak the part has.
PRECISION_ORDER = ("bf16", "fp16", "tf32", "fp32")
EMBODIED_HOW = "accelerator_hours x (GPU + host server / accelerators_per_server) embodied / hardware lifetime"


@lru_cache(maxsize=None)
def _coef_q(slot: str, cid: str, value: float, low: float, high: float) -> Q:
    # Cached: Q objects are never mutated, and the same reference rows recur across a batch.
    if low == high or value == 0:  # a datasheet figure (or a zero) has no spread to sample
        return Q(value, ids=frozenset({cid}))
    comps = ((1.0, low / value, high / value),)
    return Q(value, ((var_id(slot, comps), 1),), rank=ESTIMATED, ids=frozenset({cid}), labels={slot: (cid,)})


def reference_coef(slot: str, c: Mapping[str, Any]) -> Q:
    return _coef_q(slot, c["coefficient_id"], c["value"], c["low"], c["high"])


class _Done(Exception):
    """Raised by ``Graph.pick`` once the meter a consistency check needs (``upto``) is resolved."""


class Graph:
    """Resolve one disclosure into meters: each a (Q, method), best status first.

    ``alt`` names a scope interpretation used by the consistency checks: ``no_pue``
    (energy and CO2e without PUE), ``tdp_power`` (TDP instead of the disclosed power),
    ``measured_power`` (TDP x power fraction instead of a TDP-basis figure). ``upto`` names the
    one meter a check recomputes: the graph stops once it is resolved.
    """
    power: Q | None   # per accelerator: reported, from TDP, or unknown


    def __init__(self, d: Mapping[str, Any], overrides: Mapping[str, dict], alt: str = "", full: bool = True,
                 upto: str | None = None) -> None:
        self.d, self.ov, self.alt, self.full, self.upto = d, overrides, alt, full, upto
        self.flags: list[dict] = []
        self.meters: dict[str, tuple[Q, str]] = {}
        self.used: dict[str, tuple] = {}   # every coefficient the graph read: (row, override or None)
        self.operator = d.get("operator") or ref.operator_from_text(d.get("source"))
        self.year = int(d["year"]) if d.get("year") is not None else None
        self.convention = ref.conventions().get(d.get("convention") or "")
        self._inputs()
        self._meters()

    def variant(self, hidden: Mapping[str, Any], alt: str, upto: str) -> "Graph":
        """This disclosure's graph with a reported figure hidden (``hidden``), under a scope
        interpretation (``alt``), resolved up to one meter: what a consistency check recomputes.

        The accelerator, site, FLOPs and reference rows are this graph's (hiding an output changes
        none of them); only the reported outputs, and the power or PUE an interpretation replaces,
        are read again. A batch builds two to three such graphs per disclosure, so this is most of
        its cost saved."""
        g = Graph.__new__(Graph)
        g.__dict__.update(self.__dict__)   # a shallow copy (copy.copy costs 3x as much here)
        g.d, g.alt, g.full, g.upto = hidden, alt, False, upto
        g.flags, g.meters, g.used = [], {}, {}
        if alt in ("tdp_power", "measured_power"):
            g._power()
        if alt == "no_pue":
            g._pue(g.location)
        g._reported_outputs()
        g._meters()
        return g

    # -- inputs
    def rep(self, key: str, factor: float = 1.0) -> Q | None:
        if self.d.get(key) is None:
            return None
        eps = self.d["_eps"].get(key, 0.0)
        return Q(self.d[key] * factor, rlo=1.0 - eps, rhi=1.0 + eps, rank=REPORTED)

    def coef(self, slot: str, c: Mapping[str, Any]) -> Q:
        cid = c["coefficient_id"]
        o = (self.ov.get(cid) or self.ov.get(cid.split(":", 1)[1])) if self.ov else None
        self.used[cid] = (c, o)   # described only when the result is assembled
        return reference_coef(slot, {**o, "coefficient_id": cid} if o else c)

    def assume(self, slot: str, assumption_id: str) -> Q:
        return self.coef(slot, ref.assumption(assumption_id))

    def flag(self, flag: str, message: str, **extra: Any) -> None:
        self.flags.append({"flag": flag, "message": message, **extra})

    def _inputs(self) -> None:
        d = self.d
        self.gpu = ref.resolve_gpu(d["accelerator"]) if d.get("accelerator") else None
        if d.get("accelerator") and self.gpu is None:
            self.flag("accelerator_unresolved", f"accelerator '{d['accelerator']}' is not in gpu_aliases.csv; "
                      "power, embodied carbon and MFU that need its spec are left out")
        spec = ref.specs().get((self.gpu, "tdp_w")) if self.gpu is not None else None
        self.tdp = self.coef("tdp", spec) if spec else None
        self.tdp_spec = spec
        self._power()
        self._site()
        self.price = self.rep("price_usd_per_accelerator_hour")
        params, self.tokens = self.rep("active_params") or self.rep("params"), self.rep("tokens")
        self.flops = None
        if params is not None and self.tokens is not None:
            self.flops = est.train_flops(params, self.tokens, self.assume("mfu", "train_flops_per_param_token"))
        self.precision = d.get("precision") or next(
            (p for p in PRECISION_ORDER if (self.gpu, f"peak_flops_{p}") in ref.specs()), None)
        peak = ref.specs().get((self.gpu, f"peak_flops_{self.precision}")) if self.gpu is not None else None
        self.peak = self.coef("mfu", peak) if peak else None
        if self.gpu and d.get("precision") and peak is None:
            self.flag("precision_unavailable", f"gpu_specs.csv has no {d['precision']} peak for {self.gpu}: no MFU")
        self._reported_outputs()

    def _reported_outputs(self) -> None:
        """The reported energy and CO2e the meters start from (a check hides one of them)."""
        d = self.d
        scope = d.get("energy_scope") or "facility"
        energy = self.rep("energy_mwh", KWH_PER_MWH)
        if energy is not None and not d.get("energy_scope") and not self.alt:
            # Most published figures (Patterson et al., LLaMA) include PUE; the checks test the other reading.
            self.flag("energy_scope_assumed", "energy_scope not stated: energy_mwh is read as facility energy "
                      "(incl. PUE)")
        self.it_rep = energy if scope == "it" else None
        self.fac_rep = energy if scope == "facility" else None
        self.co2e_rep = self.rep("co2e_location_t", KG_PER_T)

    def _power(self) -> None:
        # A convention fixes the basis its figures rest on (the ML CO2 Impact calculator: TDP).
        basis = self.d.get("power_basis") or (self.convention or {}).get("power_basis")
        reported = self.rep("power_w")
        if basis is None and reported is None and not self.alt:
            basis = ref.operator_power_basis(self.operator, self.gpu)
            if basis is not None:
                self.flag("power_basis_from_operator", f"power basis not stated: {basis}, as {self.operator}'s own "
                          "published footprints price it (operator_power_convention.csv)")
        elif basis is None and reported is None:
            basis = ref.operator_power_basis(self.operator, self.gpu)
        system = ref.system_power(self.gpu) if basis == "system" else None
        share, why = ref.power_fraction(self.d.get("workload"), self.d.get("accelerator_count"), basis == "measured")
        fraction = (f"TDP x {share['coefficient_id'].split(':', 1)[1]} board-power fraction, {why} "
                    "(accelerator board only; host power not included)")
        if self.alt == "tdp_power" and self.tdp is not None:
            self.power, self.power_how = self.tdp, "TDP (interpretation: TDP instead of the disclosed power)"
        elif self.alt == "measured_power" and self.tdp is not None:
            self.power = est.power_w_from_tdp(self.tdp, self.coef("power_fraction", share))
            self.power_how = fraction + " (interpretation: measured instead of TDP)"
        elif reported is not None:
            self.power, self.power_how = reported, f"reported power per accelerator ({basis or 'basis not stated'})"
        elif system is not None:
            self.power = self.coef("tdp", system)
            self.power_how = "system power per accelerator, its share of host, network and fans included"
        elif basis == "tdp" and self.tdp is not None:
            why = ("the disclosure's stated basis" if self.d.get("power_basis") else
                   f"the {self.d.get('convention')} convention" if self.convention else f"{self.operator}'s convention")
            tool = ref.convention_tdp(self.d.get("convention"), self.gpu)
            if tool is not None:
                self.power, self.power_how = self.coef("tdp", tool), f"TDP in the {self.d['convention']} tool's table ({why})"
            else:
                self.power, self.power_how = self.tdp, f"TDP of the accelerator ({why})"
        elif self.tdp is not None:
            self.power = est.power_w_from_tdp(self.tdp, self.coef("power_fraction", share))
            self.power_how = fraction
        else:
            self.power, self.power_how = None, ""

    def _site(self) -> None:
        d = self.d
        # A named data centre whose operator publishes its own grid factor: the location says so
        # (certain), or only the source names it (probable: the regional spread stays in the range).
        named = ref.site_named(d.get("location"))
        probable = None if named else ref.site_named(d.get("source"))
        site = named or probable
        location = named[1] if named else d.get("location") or (probable[1] if probable else None)
        self.location = location = location or (ref.home_zone(self.operator) if self.operator else None)
        if location and not d.get("location"):
            self.flag("location_from_operator", f"location not stated: {location}, the home grid of operator "
                      f"{self.operator} (operator_aliases.csv)")
        self._pue(location)
        tool = ref.convention_grid(d.get("convention"), location)
        if (reported := self.rep("grid_gco2e_per_kwh")) is not None:
            self.grid, self.grid_how = reported, "reported grid intensity"
        elif tool is not None:
            self._tool_grid(*tool)
        elif site:
            self._site_grid(site[0], location, probable is not None)
        else:
            g, fallback = ref.resolve_grid(location, self.year)
            self.grid, self.grid_how = self.coef("grid_intensity", g), f"grid intensity {g['coefficient_id']}"
            if g.get("level") in ("grid zone", "country"):
                self.flag("location_coarser", f"no grid factor for {location!r} itself: its {g['level']}'s "
                          f"({g['coefficient_id'].split(':')[2]}) applies", assumption=g["coefficient_id"])
            if fallback == "location_fallback":
                self.flag("location_fallback", f"location {repr(location) if location else 'not stated'} does not "
                          "resolve to a grid zone: the wide world range applies", assumption=g["coefficient_id"])
            elif fallback == "year_unknown":
                self.flag("year_unknown", "year not stated: the newest grid factor applies, its range spanning "
                          f"the last {ref.RECENT_GRID_YEARS} years of data", assumption=g["coefficient_id"])
            elif fallback == "year_not_in_data":
                self.flag("year_not_in_data", f"no {self.year} grid factor for this zone: the nearest year's "
                          f"({g['year']}) applies, its range covering its own band and any factor of the years around "
                          f"{self.year}", assumption=g["coefficient_id"])
        self.market = self.rep("market_gco2e_per_kwh")
        self.market_how = "reported market-based factor"
        self.instrument: Q | None = None
        if self.market is None and not self.alt:
            m = ref.market_factor(self.operator, self.year)
            if m is not None:
                # The audit shows the method, not the reference row: name the row, its year and source here.
                self.market = self.coef("grid_intensity", m)
                self.market_how = (f"{self.operator}'s published market-based factor, {m['value']:g} {m['unit']} "
                                   f"from {m['year']} ({ref.cited(m)})")
            else:
                self._instrument()

    def _instrument(self) -> None:
        """A market-based figure from the operator's published contractual share (market_instruments.csv):
        location-based CO2e x (1 - share); without one, the meter stays absent and the flag says why."""
        inst = ref.market_instrument(self.operator, self.year)
        if inst is None:
            if self.operator and self.d.get("co2e_market_t") is None:
                self.flag("market_absent", f"no market-based CO2e: {self.operator} publishes no market-based factor "
                          f"or contractual share{f' for {self.year}' if self.year else ''} (operators.csv, "
                          "market_instruments.csv)")
            return
        # drawn in the embodied column: no term of an energy CO2e meter draws from it, so the share
        # varies apart from the grid factor
        self.instrument = self.coef("embodied", inst)
        share = inst["share"]
        self.instrument_how = (f"location-based CO2e x (1 - {self.operator}'s {inst['instrument']} share, "
                               f"{share['low']:g}-{share['high']:g} from {share['coefficient_id'].split(':')[2]}, "
                               f"{ref.cited(share)})")

    def _tool_grid(self, c: dict, zones: tuple[str, ...]) -> None:
        """The grid factor of the reporter's tool for its region, beside the region's own.

        The tool's table changes over the years and reporters pick a region loosely (two cards
        that say 'US-east' priced at the calculator's us-east-1, one at its us-east-2, two at
        0.30 kg/kWh, which no us-east row of today's table holds): each reading stays possible, so
        the 5-95 % range spans the tool's factors for every region the name may mean and the
        location-based range of their grids, its centre between them."""
        convention = self.d["convention"]
        regional = [ref.resolve_grid(z, self.year)[0] for z in zones]
        low, mode, high = spanning([c["low"], c["high"], *(x for g in regional for x in (g["low"], g["high"]))])
        tool = {**c, "value": mode, "low": low, "high": high, "coefficient_id": c["coefficient_id"] + ":or_zone",
                "source": f"{c['source']}; or {'; '.join(ref.cited(g) for g in regional)}"}
        self.grid = self.coef("grid_intensity", tool)
        self.grid_how = (f"grid intensity {c['coefficient_id']} (the {convention} tool's own region factor) or "
                         f"{', '.join(g['coefficient_id'] for g in regional)}")
        if not self.alt:
            self.flag("convention_grid", f"convention {convention}: the tool's factor for {', '.join(zones)} "
                      f"({c['low']:g}-{c['high']:g} {c['unit']}) or the grid's own; the range spans both",
                      assumption=tool["coefficient_id"])

    def _site_grid(self, site: str, location: str | None, probable: bool) -> None:
        c = ref.resolve_site_grid(site, self.year)
        how = f"grid intensity of the named site {site} ({c['coefficient_id']}, the operator's own factor)"
        if probable:
            regional, _ = ref.resolve_grid(location, self.year)
            c = {**c, "low": min(c["low"], regional["low"]), "high": max(c["high"], regional["high"]),
                 "coefficient_id": c["coefficient_id"] + ":probable"}
            how += f"; the site is only named in the source, so the range keeps {regional['coefficient_id']}"
            self.flag("site_probable", f"site {site} named in the source, not the location: its own grid "
                      "factor applies, the regional range kept", assumption=c["coefficient_id"])
        self.grid, self.grid_how = self.coef("grid_intensity", c), how

    def _pue(self, location: str | None) -> None:
        d = self.d
        if self.alt == "no_pue":
            self.pue, self.pue_how = exact(1.0), "no PUE (interpretation: IT energy only)"
        elif (reported := self.rep("pue")) is not None:
            self.pue, self.pue_how = reported, "reported PUE"
        elif self.convention and self.convention["pue_applied"] == "false":
            self.pue, self.pue_how = exact(1.0), f"no PUE (the {d['convention']} convention applies none)"
            if not self.alt:
                self.flag("convention", f"convention {d['convention']}: the reporter applies no PUE, so facility "
                          "energy here is board energy as published; the facility drew more")
        else:
            row, generic = ref.resolve_pue(location, d.get("facility_type"), self.operator, self.year)
            self.pue, self.pue_how = self.coef("pue", row), f"PUE {row['coefficient_id']}"
            if generic and not self.alt:
                self.flag("pue_unknown", "no PUE, cloud region, operator or facility type: the unknown-facility "
                          f"PUE range {row['low']:g}-{row['high']:g} (hyperscale to legacy) applies",
                          assumption=row["coefficient_id"])

    # -- meters
    def pick(self, name: str, candidates: list[tuple[Q | Callable[[], Q | None] | None, str]]) -> Q | None:
        """Keep the candidate with the best status (reported < derived < estimated), first on ties.

        A candidate may be a function, evaluated only when needed: nothing after a reported figure
        can win, so a reported meter costs no arithmetic on the other routes (most of a batch).
        """
        best: tuple[int, Q, str] | None = None
        for q, how in candidates:
            if callable(q):
                q = q()
            # A route that overflows is no figure: a CO2e over a grid intensity of 1e-308 g/kWh
            # gave infinite energy, and infinity x a market factor of 0 a NaN meter. The next
            # route, or none, stands.
            if q is None or not math.isfinite(q.value):
                continue
            if best is None or q.rank < best[0]:
                best = (q.rank, q, how)
                if q.rank == REPORTED:
                    break
        if best is not None:
            self.meters[name] = (best[1], best[2])
        if name == self.upto:   # found or not, nothing after it matters to the check
            raise _Done
        return best[1] if best else None

    def _it_from_co2e(self) -> Q | None:
        if self.co2e_rep is None or self.grid.value <= 0:
            return None
        return est.it_energy_from_facility_kwh(est.energy_from_co2e_kwh(self.co2e_rep, self.grid), self.pue)

    def _it_known(self) -> Q | None:
        """IT energy from the reported energy or CO2e, whichever the disclosure gives."""
        if self.it_rep is not None:
            return self.it_rep
        if self.fac_rep is not None:
            return est.it_energy_from_facility_kwh(self.fac_rep, self.pue)
        return self._it_from_co2e()

    def _hours_from_energy(self) -> Q | None:
        it_known = self._it_known()
        return est.accelerator_hours_from_it_energy(it_known, self.power) if it_known and self.power else None

    def _hours_from_flops(self) -> Q | None:
        # Reported hours are never checked against FLOPs / typical MFU: the MFU check speaks for them.
        if self.flops is None or self.peak is None or self.upto == "accelerator_hours":
            return None
        return est.accelerator_hours_from_flops(self.flops, self.peak, self.assume("mfu", "mfu_typical"))

    def _hours(self) -> Q | None:
        count, days, cost = self.rep("accelerator_count"), self.rep("training_days"), self.rep("cost_usd")
        return self.pick("accelerator_hours", [
            (self.rep("accelerator_hours"), "reported"),
            (lambda: est.accelerator_hours_from_days(count, days) if count and days else None,
             "accelerator_count x training_days x 24 h/d"),
            (self._hours_from_energy, f"IT energy from the reported figures / {self.power_how}"),
            (lambda: est.accelerator_hours_from_cost(cost, self.price) if cost and self.price else None,
             "reported cost / price per accelerator-hour"),
            (self._hours_from_flops, f"6 x params x tokens / ({self.precision} peak x mfu_typical)"),
        ])

    def _meters(self) -> None:
        try:
            self._meter_chain()
        except _Done:   # the one meter a consistency check asked for (``upto``) is known
            pass

    def _meter_chain(self) -> None:
        hours, power, pue, grid = self._hours(), self.power, self.pue, self.grid
        it = self.pick("it_energy_kwh", [
            (self.it_rep, "reported energy (IT scope)"),
            (lambda: est.it_energy_kwh(hours, power) if hours and power else None,
             f"accelerator_hours x {self.power_how}"),
            (lambda: est.it_energy_from_facility_kwh(self.fac_rep, pue) if self.fac_rep else None,
             f"reported facility energy / {self.pue_how}"),
            (self._it_from_co2e, f"reported CO2e / {self.grid_how} / {self.pue_how}"),
        ])
        facility = self.pick("facility_energy_kwh", [
            (self.fac_rep, "reported energy (facility scope, incl. PUE)"),
            (lambda: est.facility_energy_kwh(it, pue) if it else None, f"IT energy x {self.pue_how}"),
            (lambda: est.energy_from_co2e_kwh(self.co2e_rep, grid) if self.co2e_rep and grid.value > 0 else None,
             f"reported CO2e / {self.grid_how}"),
        ])
        scope = self._co2e_scope()
        self.pick("co2e_location_kg", [
            (self.co2e_rep, "reported"),
            (lambda: est.co2e_kg(facility, grid) * scope[0] if facility else None,
             f"facility energy x {self.grid_how}{scope[1]}"),
        ])
        location = self.meters.get("co2e_location_kg")
        self.pick("co2e_market_kg", [
            (self.rep("co2e_market_t", KG_PER_T), "reported"),
            (lambda: est.co2e_kg(facility, self.market) if facility and self.market is not None else None,
             f"facility energy x {self.market_how}"),
            (lambda: location[0] * self.instrument if location and self.instrument is not None else None,
             getattr(self, "instrument_how", "")),
        ])
        if self.full:  # the consistency checks recompute only hours, energy, CO2e and cost
            self._embodied(hours)
        cost = self.pick("cost_usd", [
            (self.rep("cost_usd"), "reported"),
            (lambda: est.cost_usd(hours, self.price) if hours and self.price else None,
             "accelerator_hours x reported price per accelerator-hour"),
        ])
        if self.full:
            self._work(hours, facility, cost)

    def _co2e_scope(self) -> tuple[Q, str]:
        """(factor on facility-energy CO2e, how) for a disclosure that declares its energy as IT
        energy: reporters price the energy figure they publish (BLOOM: 433 MWh of GPU energy x
        57 g = 24.69 t, PUE 1.2 disclosed beside it) as often as the facility's, so the range
        spans the IT and the facility reading, its centre between them. An IT energy measured at the
        source (`x_energy_measured_by`: meterbook's DCGM readings, a CodeCarbon run) has no such
        doubt: its CO2e is on the facility's energy, as every other page prices it."""
        if (self.d.get("energy_scope") != "it" or self.d.get(MEASURED_BY) or self.pue.value <= 1.0
                or self.alt == "no_pue"):
            return exact(1.0), ""
        low, mode, high = spanning([1.0 / self.pue.value, 1.0])
        c = {"value": mode, "low": low, "high": high, "unit": "ratio", "coefficient_id": "energy_scope:it:co2e_scope",
             "source": "energy_scope it: CO2e on the IT energy as published (1 / PUE) or on the facility's (1)"}
        return self.coef("pue", c), " x (IT or facility scope: energy declared as IT energy)"

    def _embodied(self, hours: Q | None) -> None:
        if hours is None:
            return
        self.pick("co2e_embodied_kg", [(
            est.co2e_embodied_kg(hours, embodied_per_accelerator(self.gpu, self.coef),
                                 self.assume("lifetime", "hardware_lifetime_years")), EMBODIED_HOW)])

    def _work(self, hours: Q | None, facility: Q | None, cost: Q | None) -> None:
        if self.flops is None:
            return
        params_key = "active_params" if self.d.get("active_params") else "params"
        self.pick("train_flops", [(self.flops, f"train_flops_per_param_token x {params_key} x tokens")])
        if hours is not None and hours.value > 0 and self.peak is not None:
            self.pick("mfu", [(est.mfu(self.flops, hours, self.peak),
                               f"train_flops / (accelerator_hours x 3600 s/h x {self.precision} dense peak)")])
        tokens = self.tokens
        if cost is not None:
            self.pick("cost_usd_per_million_tokens", [(est.cost_usd_per_million_tokens(cost, tokens), "cost / tokens")])
        if facility is not None:
            self.pick("energy_j_per_token", [(est.energy_j_per_token(facility, tokens), "facility energy / tokens")])
        co2e = self.meters.get("co2e_location_kg")
        if co2e is not None:
            self.pick("co2e_g_per_million_tokens",
                      [(est.co2e_g_per_million_tokens(co2e[0], tokens), "location-based CO2e / tokens")])



@lru_cache(maxsize=1024)
def _per_accelerator(gpu: Q, host: Q, per_server: Q) -> Q:
    # Keyed by identity: _coef_q hands out one Q per reference row, so a batch builds each once.
    return est.embodied_kg_per_accelerator(gpu, host, per_server)


def embodied_per_accelerator(gpu: str | None, coef: Callable[[str, Mapping[str, Any]], Q] = reference_coef) -> Q:
    """Embodied kg per accelerator: the part's embodied.csv row (the unknown-GPU assumption for a
    part without one) plus its share of an 8-GPU host. ``coef`` turns a reference row into a Q
    (a disclosure's applies its assumption overrides)."""
    gpu_row = (ref.embodied_rows().get((gpu, "gpu")) if gpu is not None else None) or ref.assumption("gpu_embodied_kgco2e_unknown")
    host = coef("embodied", ref.embodied_rows()[("8-gpu-hgx-server", "server")])
    return _per_accelerator(coef("embodied", gpu_row), host, coef("embodied", ref.assumption("accelerators_per_server")))


def embodied_for_hours(hours_by_gpu: Mapping[str | None, float]) -> tuple[Q, str]:
    """Embodied CO2e [kg] of accelerator-hours spread over GPU models (a team's month), and how.

    Per accelerator, the hours-weighted mean of each model's embodied figure; the models' rows
    move together (comonotonic, as for GPU + host), the widest and so the cautious reading.
    """
    total_h = sum(hours_by_gpu.values())
    shares = [(h / total_h) * embodied_per_accelerator(gpu) for gpu, h in sorted(hours_by_gpu.items(), key=str) if h > 0]
    per_accelerator = shares[0]
    for q in shares[1:]:
        per_accelerator = per_accelerator + q
    lifetime = reference_coef("lifetime", ref.assumption("hardware_lifetime_years"))
    models = ", ".join(f"{gpu or 'unknown GPU'} {h:,.0f} h" for gpu, h in sorted(hours_by_gpu.items(), key=str) if h > 0)
    return est.co2e_embodied_kg(exact(total_h), per_accelerator, lifetime), f"{EMBODIED_HOW} ({models})"


/** The caller's usage per day (GET /v1/usage): executions, VM time and CPU time, as plain SVG bar charts. */
import { useState } from 'react';
import { api, withQuery, type Schemas } from '../api.ts';
import { ErrorBanner, useLoad } from '../ui.tsx';

type Day = Schemas['DailyUsageList']['days'][number];

/** Three significant digits: 0.031 CPU seconds stays visible, 12345 executions stay whole. */
function formatAmount(value: number): string {
  return value >= 1000 ? Math.round(value).toLocaleString() : value.toLocaleString(undefined, { maximumSignificantDigits: 3 });
}

function BarChart({ title, days, value, unit }: { title: string; days: Day[]; value: (day: Day) => number; unit: string }) {
  const width = 640;
  const height = 180;
  const pad = { left: 48, bottom: 24, top: 12 };
  const max = Math.max(...days.map(value), 0) || 1;
  const band = (width - pad.left) / Math.max(days.length, 1);
  const plot = height - pad.bottom - pad.top;
  const total = days.reduce((sum, day) => sum + value(day), 0);
  return (
    <figure className="card">
      <figcaption>
        <h2>{title}</h2>
        <p className="muted">
          {formatAmount(total)} {unit} in {days.length} days
        </p>
      </figcaption>
      <svg className="chart" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${title} per day`}>
        <line x1={pad.left} x2={width} y1={pad.top + plot} y2={pad.top + plot} stroke="#d0d7de" />
        <text x={pad.left - 6} y={pad.top + 4} textAnchor="end" fontSize="11" fill="#57606a">
          {formatAmount(max)}
        </text>
        <text x={pad.left - 6} y={pad.top + plot} textAnchor="end" fontSize="11" fill="#57606a">
          0
        </text>
        {days.map((day, i) => {
          const h = (value(day) / max) * plot;
          const x = pad.left + i * band + band * 0.15;
          return (
            <g key={day.date}>
              <rect x={x} y={pad.top + plot - h} width={band * 0.7} height={h} fill="#0969da">
                <title>{`${day.date}: ${formatAmount(value(day))} ${unit}`}</title>
              </rect>
              {days.length <= 16 || i % Math.ceil(days.length / 8) === 0 ? (
                <text x={x + band * 0.35} y={height - 6} textAnchor="middle" fontSize="10" fill="#57606a">
                  {day.date.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

export function UsagePage() {
  const [days, setDays] = useState(14);
  const usage = useLoad(() => api<Schemas['DailyUsageList']>('GET', withQuery('/v1/usage', { days })), [days]);
  const list = usage.data?.days ?? [];
  return (
    <section>
      <h1>Usage</h1>
      <div className="filter">
        <label htmlFor="days">Days</label>
        <select id="days" value={days} onChange={(event) => setDays(Number(event.target.value))}>
          {[7, 14, 30, 90].map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <ErrorBanner error={usage.error} />
      <div className="session-grid">
        <BarChart title="Executions" days={list} value={(d) => d.executions} unit="executions" />
        <BarChart title="VM time" days={list} value={(d) => d.vm_seconds / 60} unit="VM minutes" />
        <BarChart title="CPU time" days={list} value={(d) => d.cpu_seconds} unit="CPU seconds" />
      </div>
    </section>
  );
}

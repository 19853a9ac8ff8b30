// Reads an example pipeline of dist/ci/ and prints its jobs as JSON, so that a test can run the
// commands themselves outside the CI platform: [{job, step, env, script, needs}].
//   GitHub Actions (*.yml with "jobs:"): each step with a `run`, its job's and its own `env`.
//   GitLab CI (*.yml without "jobs:"): each job's `script` lines, its `variables`, `needs`.
//   Jenkins (Jenkinsfile): each stage's sh steps (single-quoted Groovy strings), the pipeline's
//   environment block, the variables its withCredentials bind, as {"NAME": null}.
// Usage: node ci-jobs.js FILE
'use strict';
const fs = require('fs');
const yaml = require('js-yaml');

const file = process.argv[2];
const text = fs.readFileSync(file, 'utf8');
const out = [];

function groovyString(s) {
  return s.replace(/\\(['\\])/g, '$1');
}

if (/Jenkinsfile$/.test(file)) {
  const env = {};
  const envBlock = /environment\s*\{([^}]*)\}/.exec(text);
  if (envBlock) {
    for (const m of envBlock[1].matchAll(/(\w+)\s*=\s*'([^']*)'/g)) env[m[1]] = m[2];
  }
  // Stages in order; within each, its credentials and sh steps.
  const stageRe = /stage\('([^']+)'\)\s*\{/g;
  const starts = [...text.matchAll(stageRe)];
  starts.forEach((m, i) => {
    const body = text.slice(m.index, i + 1 < starts.length ? starts[i + 1].index : text.length);
    const senv = Object.assign({}, env);
    for (const c of body.matchAll(/variable:\s*'(\w+)'/g)) senv[c[1]] = null;
    const scripts = [];
    for (const s of body.matchAll(/sh\s*(?:\(\s*returnStatus:\s*true,\s*script:\s*)?'((?:[^'\\]|\\.)*)'/g))
      scripts.push(groovyString(s[1]));
    out.push({ job: m[1], step: m[1], env: senv, script: scripts.join('\n'), needs: [],
               returnStatus: /returnStatus:\s*true/.test(body) });
  });
} else {
  const doc = yaml.load(text);
  if (doc.jobs) {
    for (const [job, j] of Object.entries(doc.jobs)) {
      for (const step of j.steps || []) {
        if (!step.run) continue;
        out.push({ job, step: step.name || '', env: Object.assign({}, j.env || {}, step.env || {}),
                   script: step.run, needs: [].concat(j.needs || []) });
      }
    }
  } else {
    const reserved = new Set(['stages', 'variables', 'default', 'include', 'workflow', 'image',
                              'services', 'before_script', 'after_script', 'cache']);
    for (const [job, j] of Object.entries(doc)) {
      if (reserved.has(job) || job.startsWith('.') || typeof j !== 'object') continue;
      out.push({ job, step: job, env: Object.assign({}, doc.variables || {}, j.variables || {}),
                 script: [].concat(j.script || []).join('\n'),
                 needs: [].concat(j.needs || []), artifacts: j.artifacts || null });
    }
  }
}
console.log(JSON.stringify(out, null, 1));

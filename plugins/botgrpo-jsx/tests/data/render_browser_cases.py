"""Components whose verdict a browser decides: ones a browser renders, ones only Node could run.

Each entry: (kind, code). Rendered with synthesised props (no row props). ``BROWSER_RENDERS`` run in a
page built by a bundler for the browser (a ``<div id="root">``, imports of the project's own modules and
of npm packages resolved by the bundler, ``window``/``document``/``localStorage`` at module level, no
server render); ``jsx.renders`` must score them 1. ``BROWSER_FAILS`` reach what a browser does not have
(a Node built-in module, Node's globals); a browser bundle fails to build or throws, so ``jsx.renders``
must score them 0. Shapes taken from the causes of false verdicts seen on real components (stubbed data
helpers used with ``use()``/``.then``, class instances from stubbed libraries, a stub cloned, Next.js-style
page props, ``cloneElement`` over children, module-level ``window.localStorage``,
``useSyncExternalStore`` without ``getServerSnapshot``, entry files). Written for this plugin's tests
(Apache-2.0).
"""

from __future__ import annotations

BROWSER_RENDERS: list[tuple[str, str]] = [
    (
        "module_level_local_storage",
        "import { useState } from 'react';\n"
        "const saved = window.localStorage.getItem('theme') || 'light';\n"
        "export default function Theme() {\n"
        "  const [theme, setTheme] = useState(saved);\n"
        "  return <button onClick={() => setTheme('dark')}>{theme}</button>;\n"
        "}\n",
    ),
    (
        "document_at_module_level",
        "const title = document.title || 'App';\n"
        "export default function Header() {\n  return <h1>{title}</h1>;\n}\n",
    ),
    (
        "sync_external_store_without_server_snapshot",
        "import { useSyncExternalStore } from 'react';\n"
        "function subscribe(cb) {\n  window.addEventListener('resize', cb);\n"
        "  return () => window.removeEventListener('resize', cb);\n}\n"
        "export default function Width() {\n"
        "  const width = useSyncExternalStore(subscribe, () => window.innerWidth);\n"
        "  return <p>{width}</p>;\n}\n",
    ),
    (
        "entry_file_create_root",
        "import React from 'react';\nimport { createRoot } from 'react-dom/client';\n"
        "import App from './App';\nimport './index.css';\n\n"
        "createRoot(document.getElementById('root')).render(\n"
        "  <React.StrictMode>\n    <App />\n  </React.StrictMode>\n);\n",
    ),
    (
        "entry_file_react_dom_client_default",
        "import ReactDOM from 'react-dom/client';\nimport App from './App';\n"
        "const root = ReactDOM.createRoot(document.getElementById('root'));\nroot.render(<App />);\n",
    ),
    (
        "stubbed_helper_then",
        "import { useEffect, useState } from 'react';\nimport { fetchUser } from './api';\n"
        "export default function Profile() {\n  const [user, setUser] = useState(null);\n"
        "  useEffect(() => {\n    fetchUser(1).then((u) => setUser(u)).catch(() => setUser(null));\n"
        "  }, []);\n  return <div>{user ? 'loaded' : 'loading'}</div>;\n}\n",
    ),
    (
        "stubbed_helper_awaited",
        "import { useEffect, useState } from 'react';\nimport { loadItems } from '../lib/data';\n"
        "export default function Items() {\n  const [items, setItems] = useState([]);\n"
        "  useEffect(() => {\n    (async () => {\n      const result = await loadItems();\n"
        "      setItems(Array.isArray(result) ? result : []);\n    })();\n  }, []);\n"
        "  return <ul>{items.map((i) => <li key={i}>{i}</li>)}</ul>;\n}\n",
    ),
    (
        "stubbed_helper_with_use",
        "import { use, Suspense } from 'react';\nimport { getPosts } from './posts';\n"
        "const postsPromise = getPosts();\n"
        "function Posts() {\n  const posts = use(postsPromise);\n"
        "  return <p>{posts ? 'posts' : 'none'}</p>;\n}\n"
        "export default function Page() {\n"
        "  return <Suspense fallback={<p>loading</p>}><Posts /></Suspense>;\n}\n",
    ),
    (
        "class_instance_from_stubbed_library",
        "import { CalendarDate } from '@internationalized/date';\n"
        "export default function Due() {\n  const start = new CalendarDate(2024, 1, 31);\n"
        "  const due = start.add({ days: 14 });\n  return <time>{String(due)}</time>;\n}\n",
    ),
    (
        "stub_cloned",
        "import { useState } from 'react';\nimport { defaultSettings } from './settings';\n"
        "export default function Settings() {\n"
        "  const [settings, setSettings] = useState(() => structuredClone(defaultSettings));\n"
        "  return <pre>{JSON.stringify(settings)}</pre>;\n}\n",
    ),
    (
        "page_props_spread",
        "export default function MyApp({ Component, pageProps }) {\n"
        "  return <Component {...pageProps} />;\n}\n",
    ),
    (
        "clone_element_over_children",
        "import { Children, cloneElement, isValidElement } from 'react';\n"
        "export default function Toolbar({ children, size }) {\n"
        "  return (\n    <div className='toolbar'>\n"
        "      {Children.map(children, (child) => cloneElement(child, { size }))}\n"
        "    </div>\n  );\n}\n",
    ),
    (
        "process_env_node_env",
        "export default function Banner() {\n"
        "  const dev = process.env.NODE_ENV !== 'production';\n"
        "  return <p>{dev ? 'development build' : 'production'}</p>;\n}\n",
    ),
]

BROWSER_FAILS: list[tuple[str, str]] = [
    (
        "import_fs",
        "import fs from 'fs';\n"
        "export default function Readme() {\n  return <pre>{String(fs.readFileSync)}</pre>;\n}\n",
    ),
    (
        "import_fs_unused",
        "import { readFileSync } from 'fs';\nexport default function Plain() {\n  return <p>hello</p>;\n}\n",
    ),
    (
        "require_net",
        "const net = require('net');\n"
        "export default function Status() {\n  const ok = typeof net.connect === 'function';\n"
        "  return <p>{ok ? 'up' : 'down'}</p>;\n}\n",
    ),
    (
        "import_node_prefixed",
        "import { join } from 'node:path';\n"
        "export default function File() {\n  return <p>{join('a', 'b')}</p>;\n}\n",
    ),
    (
        "process_cwd",
        "export default function Where() {\n  return <p>{process.cwd()}</p>;\n}\n",
    ),
    (
        "buffer_global",
        "export default function Encoded() {\n"
        "  return <p>{Buffer.from('hello').toString('base64')}</p>;\n}\n",
    ),
    (
        "dirname_global",
        "export default function Dir() {\n  return <p>{__dirname}</p>;\n}\n",
    ),
    (
        "set_immediate",
        "import { useEffect, useState } from 'react';\n"
        "export default function Later() {\n  const [n, setN] = useState(0);\n"
        "  setImmediate(() => {});\n  return <p>{n}</p>;\n}\n",
    ),
]

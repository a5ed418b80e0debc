// Source: npm create-vite@9.3.0, file template-react-ts/src/main.tsx; licence MIT (see LICENSES/create-vite.txt)
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import './index.css'
import App from './App.tsx'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)

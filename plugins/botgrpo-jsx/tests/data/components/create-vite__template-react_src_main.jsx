// Source: npm create-vite@9.3.0, file template-react/src/main.jsx; licence MIT (see LICENSES/create-vite.txt)
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import './index.css'
import App from './App.jsx'

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <App />
  </StrictMode>,
)

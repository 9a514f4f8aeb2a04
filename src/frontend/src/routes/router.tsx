// Client routes, all under /app (the server sends index.html for any /app/* deep link).
import { createBrowserRouter, Navigate } from "react-router";
import { RouteError } from "./RouteError";
import { Shell } from "./Shell";
import { OptimizationPage } from "./OptimizationPage";
import { SettingsPage } from "./SettingsPage";
import { VolumesPage } from "./VolumesPage";
import { WorkspacePage } from "./WorkspacePage";

export const routes = [
  {
    path: "/app",
    element: <Shell />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <Navigate to="/app/workspace" replace /> },
      { path: "workspace", element: <WorkspacePage /> },
      { path: "workspace/:sessionId", element: <WorkspacePage /> },
      { path: "optimization", element: <OptimizationPage /> },
      { path: "volumes", element: <VolumesPage /> },
      { path: "settings", element: <SettingsPage /> },
      { path: "*", element: <Navigate to="/app/workspace" replace /> },
    ],
  },
  { path: "*", element: <Navigate to="/app/workspace" replace /> },
];

export const router = createBrowserRouter(routes);

// Client routes, all under /app (the server sends index.html for any /app/* deep link). The Workspace is in
// the main bundle; the other pages are loaded when first visited (one chunk each).
import { createBrowserRouter, Navigate } from "react-router";
import { NotFoundPage } from "./NotFoundPage";
import { RouteError } from "./RouteError";
import { Shell } from "./Shell";
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
      { path: "optimization", lazy: () => import("./OptimizationPage").then((m) => ({ Component: m.OptimizationPage })) },
      { path: "volumes", lazy: () => import("./VolumesPage").then((m) => ({ Component: m.VolumesPage })) },
      { path: "settings", lazy: () => import("./SettingsPage").then((m) => ({ Component: m.SettingsPage })) },
      { path: "*", element: <NotFoundPage /> },
    ],
  },
  { path: "*", element: <Navigate to="/app/workspace" replace /> },
];

export const router = createBrowserRouter(routes);

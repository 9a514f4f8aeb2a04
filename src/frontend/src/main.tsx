import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { RouterProvider } from "react-router";
import "./index.css";
import { isUnauthorized } from "./lib/api/errors";
import { applyTheme } from "./lib/theme";
import { router } from "./routes/router";

applyTheme();
window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", applyTheme);

const queryClient = new QueryClient({
  defaultOptions: {
    queries: { retry: (count, error) => !isUnauthorized(error) && count < 1, refetchOnWindowFocus: false, staleTime: 5_000 },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);

// LLM profiles and role bindings (server state).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call, type Schemas } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

export function useProfiles() {
  return useQuery({ queryKey: ["llm", "profiles"], queryFn: () => call(api.GET("/api/v1/llm-profiles")) });
}

export function useRoles() {
  return useQuery({ queryKey: ["llm", "roles"], queryFn: () => call(api.GET("/api/v1/llm-roles")) });
}

export function useProfileMutations() {
  const client = useQueryClient();
  const refresh = () => refreshAfterWrite(client, { queryKey: ["llm"] });
  return {
    create: useMutation({ mutationFn: (body: Schemas["ProfileCreate"]) => call(api.POST("/api/v1/llm-profiles", { body })), onSuccess: refresh }),
    update: useMutation({
      mutationFn: ({ id, body }: { id: string; body: Schemas["ProfileUpdate"] }) =>
        call(api.PATCH("/api/v1/llm-profiles/{profile_id}", { params: { path: { profile_id: id } }, body })),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (id: string) => call(api.DELETE("/api/v1/llm-profiles/{profile_id}", { params: { path: { profile_id: id } } })),
      onSuccess: refresh,
    }),
    test: useMutation({
      mutationFn: (id: string) => call(api.POST("/api/v1/llm-profiles/{profile_id}/test", { params: { path: { profile_id: id } } })),
    }),
    importEnv: useMutation({ mutationFn: () => call(api.POST("/api/v1/llm-profiles/import-env")), onSuccess: refresh }),
    bind: useMutation({ mutationFn: (body: Schemas["RolesUpdate"]) => call(api.PATCH("/api/v1/llm-roles", { body })), onSuccess: refresh }),
  };
}

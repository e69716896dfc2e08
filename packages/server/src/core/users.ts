/** Users: creation, password sign-in and plans. */
import { AppError, conflict, notFound } from './errors.ts';
import { hashPassword, verifyPassword } from './auth/passwords.ts';
import type { Clock } from './clock.ts';
import { isUniqueViolation, type Database } from '../store/database.ts';
import type { User } from '../model.ts';
import { findUserById, findUserByUsername, findUserWithPasswordHash, insertUser, listUsers, updateUserPassword, updateUserPlan } from '../store/users-store.ts';

export type { User };

const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;
const MIN_PASSWORD_LENGTH = 8;

// A fixed hash to verify against when the username is unknown, so a sign-in takes as long either way
// and response times do not reveal which usernames exist.
const DUMMY_HASH = 'scrypt$16384$8$1$c2FuZGJveGQtZHVtbXk=$3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

export class UserService {
  constructor(
    private readonly database: Database,
    private readonly plans: Record<string, unknown>,
    private readonly defaultPlan: string,
    private readonly clock: Clock,
  ) {}

  /** Creates a user; the username must be free and the plan known. */
  async create(input: { username: string; password: string; plan?: string; isAdmin?: boolean }): Promise<User> {
    if (!USERNAME_PATTERN.test(input.username)) {
      throw new AppError('BAD_REQUEST', 'username must be 1-64 characters of letters, digits and . _ @ + - (starting with a letter or digit)');
    }
    if (input.password.length < MIN_PASSWORD_LENGTH) {
      throw new AppError('BAD_REQUEST', `password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    const plan = input.plan ?? this.defaultPlan;
    this.assertPlan(plan);
    try {
      return await insertUser(this.database.db, {
        username: input.username,
        passwordHash: await hashPassword(input.password),
        plan,
        isAdmin: input.isAdmin ?? false,
        createdAt: this.clock.now().toISOString(),
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`user ${input.username} already exists`);
      throw error;
    }
  }

  /** The user whose password this is, or null; always costs one scrypt. */
  async verifyPassword(username: string, password: string): Promise<User | null> {
    const found = await findUserWithPasswordHash(this.database.db, username);
    const ok = await verifyPassword(password, found?.passwordHash ?? DUMMY_HASH);
    return found && ok ? found.user : null;
  }

  /** Every user, by id (the administrators' user list). */
  async list(): Promise<User[]> {
    return listUsers(this.database.db);
  }

  async get(id: number): Promise<User | null> {
    return (await findUserById(this.database.db, id)) ?? null;
  }

  async getByUsername(username: string): Promise<User | null> {
    return (await findUserByUsername(this.database.db, username)) ?? null;
  }

  async setPassword(username: string, password: string): Promise<void> {
    if (password.length < MIN_PASSWORD_LENGTH) throw new AppError('BAD_REQUEST', `password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    const user = await this.getByUsername(username);
    if (!user) throw notFound(`user ${username}`);
    await updateUserPassword(this.database.db, user.id, await hashPassword(password));
  }

  async setPlan(username: string, plan: string): Promise<void> {
    this.assertPlan(plan);
    const user = await this.getByUsername(username);
    if (!user) throw notFound(`user ${username}`);
    await updateUserPlan(this.database.db, user.id, plan);
  }

  private assertPlan(plan: string): void {
    if (!(plan in this.plans)) throw new AppError('BAD_REQUEST', `unknown plan "${plan}" (known: ${Object.keys(this.plans).join(', ')})`);
  }
}
